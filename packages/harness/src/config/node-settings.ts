import { nonEmptyText, singleBlock, isBody } from './read-document.js';

/**
 * What the agent config says about the node itself, as Nomad's agent publishes it: the
 * top-level `name` and `datacenter`, and `client { node_class, meta { ... } }`.
 * (`node_pool` is read beside the plugin and volumes dirs.)
 */
export interface NodeSettings {
  /** `name`; Nomad's default is the host name. */
  name?: string | undefined;
  /** `datacenter`; Nomad's default is dc1. */
  datacenter?: string | undefined;
  /** `client.node_class`; Nomad's default is empty. */
  nodeClass?: string | undefined;
  /** `client.meta`. */
  meta: Record<string, string>;
}

/** The top-level keys of Nomad's agent config (command/agent/config.go). */
const AGENT_KEYS = [
  'acl', 'addresses', 'advertise', 'audit', 'autopilot', 'bind_addr', 'client', 'consul', 'data_dir', 'datacenter',
  'disable_anonymous_signature', 'disable_update_check', 'enable_debug', 'enable_syslog', 'eventlog',
  'http_api_response_headers', 'keyring', 'leave_on_interrupt', 'leave_on_terminate', 'license_path', 'limits',
  'log_file', 'log_include_location', 'log_json', 'log_level', 'log_rotate_bytes', 'log_rotate_duration',
  'log_rotate_max_files', 'name', 'plugin', 'plugin_dir', 'ports', 'region', 'reporting', 'rpc', 'sentinel', 'server',
  'syslog_facility', 'telemetry', 'tls', 'ui', 'vault',
]; // prettier-ignore

/** The keys of Nomad's `client` block (ClientConfig). */
const CLIENT_KEYS = [
  'alloc_dir', 'alloc_mounts_dir', 'artifact', 'bind_wildcard_default_host_network', 'bridge_network_hairpin_mode',
  'bridge_network_name', 'bridge_network_subnet', 'bridge_network_subnet_ipv6', 'cgroup_parent', 'chroot_env',
  'client_max_port', 'client_min_port', 'cni_config_dir', 'cni_path', 'common_plugin_dir', 'cpu_disable_dmidecode',
  'cpu_total_compute', 'default_ineligible', 'disable_remote_exec', 'disk_free_mb', 'disk_total_mb',
  'drain_on_shutdown', 'enabled', 'fingerprint', 'gc_disk_usage_threshold', 'gc_inode_usage_threshold',
  'gc_interval', 'gc_max_allocs', 'gc_parallel_destroys', 'gc_volumes_on_node_gc', 'host_network', 'host_volume',
  'host_volume_plugin_dir', 'host_volumes_dir', 'intro_token', 'log_file', 'max_dynamic_port', 'max_kill_timeout',
  'memory_total_mb', 'meta', 'min_dynamic_port', 'network_interface', 'network_speed', 'no_host_uuid', 'node_class',
  'node_max_allocs', 'node_pool', 'nomad_service_discovery', 'options', 'preferred_address_family',
  'reservable_cores', 'reserved', 'server_join', 'servers', 'state_dir', 'stats', 'template', 'users',
]; // prettier-ignore

/**
 * Reads the node's settings, and says which keys Nomad's agent would not know: Nomad
 * refuses to start on them (`unexpected keys ...`); dhv warns, naming the nearest known key.
 */
export function readNodeSettings(
  doc: Record<string, unknown>,
  problems: string[],
): { settings: NodeSettings; warnings: string[] } {
  const client = singleBlock(doc.client) ?? {};
  const text = nonEmptyText(problems);
  const meta = new Map<string, string>();
  for (const body of [client.meta].flat()) {
    if (body === undefined) continue;
    if (!isBody(body)) {
      problems.push('client.meta must be a block of strings (meta { rack = "r1" })');
      continue;
    }
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        meta.set(key, String(value));
      else problems.push(`client.meta.${key} must be a string`);
    }
  }
  const settings: NodeSettings = {
    name: text('name', doc.name),
    datacenter: text('datacenter', doc.datacenter),
    nodeClass: text('client.node_class', client.node_class),
    meta: Object.fromEntries(meta),
  };
  const warnings = [
    ...unexpectedKeys(Object.keys(doc), AGENT_KEYS, ''),
    ...unexpectedKeys(Object.keys(client), CLIENT_KEYS, 'client '),
  ];
  return { settings, warnings };
}

function unexpectedKeys(keys: readonly string[], known: readonly string[], path: string): string[] {
  return keys
    .filter((k) => !known.includes(k.toLowerCase()))
    .map((k) => {
      const near = nearest(k, known);
      return (
        `${path}unexpected keys ${k}: a real Nomad agent refuses to start with this config; dhv ignores the key` +
        (near ? ` (did you mean ${path === '' ? '' : path.trim() + '.'}${near}?)` : '')
      );
    });
}

/** The known key at the smallest edit distance, when it is close enough to be a slip (at most a third of the word). */
export function nearest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(word.toLowerCase(), candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
