# Create with: nomad volume create volume.hcl
type      = "host"
name      = "{{pluginId}}-example"
plugin_id = "{{pluginId}}"

# create fails when the filesystem has less free space than capacity_min. Nomad's
# servers refuse a capacity_min without a capacity_max at least as large.
capacity_min = "100MiB"
capacity_max = "10GiB"

parameters {
  mode = "0750"
}

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
