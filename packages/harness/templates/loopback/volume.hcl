# Create with: nomad volume create volume.hcl
type      = "host"
name      = "{{pluginId}}-example"
plugin_id = "{{pluginId}}"

# The size of the filesystem; workloads cannot write more than this.
capacity_min = "1GiB"
capacity_max = "1GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
