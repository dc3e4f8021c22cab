# Create with: nomad volume create volume.hcl
type      = "host"
name      = "{{pluginId}}-example"
plugin_id = "{{pluginId}}"

# create fails when the filesystem has less free space than this.
capacity_min = "100MiB"

parameters {
  mode = "0750"
}

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
