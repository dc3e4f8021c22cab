import type { Command } from '@oclif/core';
import Build from './build.js';
import Check from './check.js';
import Help from './help.js';
import Init from './init.js';
import AgentFingerprint from './agent/fingerprint.js';
import AgentGc from './agent/gc.js';
import Demo from './demo.js';
import AgentRestart from './agent/restart.js';
import NodeStatus from './node/status.js';
import PluginInstall from './plugin/install.js';
import PluginList from './plugin/list.js';
import PluginRun from './plugin/run.js';
import RecordCommand from './record.js';
import Replay from './replay.js';
import VolumeCreate from './volume/create.js';
import VolumeDelete from './volume/delete.js';
import VolumeRegister from './volume/register.js';
import VolumeStatus from './volume/status.js';
import Version from './version.js';
import JobRun from './job/run.js';
import JobStatus from './job/status.js';
import JobStop from './job/stop.js';
import AllocStatus from './alloc/status.js';
import AllocLogs from './alloc/logs.js';
import VolumeClaimList from './volume/claim/list.js';
import VolumeClaimDelete from './volume/claim/delete.js';
import NamespaceApply from './namespace/apply.js';
import NamespaceDelete from './namespace/delete.js';
import NamespaceList from './namespace/list.js';
import NamespaceStatus from './namespace/status.js';

/**
 * Every `dhv` command, by its oclif ID (topics joined with ':'). Explicit, so the CLI
 * starts without scanning the file system for commands.
 */
export const COMMANDS: Record<string, Command.Class> = {
  build: Build,
  check: Check,
  help: Help,
  init: Init,
  'agent:fingerprint': AgentFingerprint,
  'agent:gc': AgentGc,
  'agent:restart': AgentRestart,
  demo: Demo,
  'node:status': NodeStatus,
  'plugin:install': PluginInstall,
  'plugin:list': PluginList,
  'plugin:run': PluginRun,
  record: RecordCommand,
  replay: Replay,
  'volume:create': VolumeCreate,
  'volume:delete': VolumeDelete,
  'volume:register': VolumeRegister,
  'volume:status': VolumeStatus,
  version: Version,
  'job:run': JobRun,
  'job:status': JobStatus,
  'job:stop': JobStop,
  'alloc:status': AllocStatus,
  'alloc:logs': AllocLogs,
  'volume:claim:list': VolumeClaimList,
  'volume:claim:delete': VolumeClaimDelete,
  'namespace:apply': NamespaceApply,
  'namespace:delete': NamespaceDelete,
  'namespace:list': NamespaceList,
  'namespace:status': NamespaceStatus,
};
