# Create with: nomad volume create volume.hcl
type      = "host"
name      = "{{pluginId}}-example"
plugin_id = "{{pluginId}}"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
