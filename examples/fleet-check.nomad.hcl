# dhv check of every host volume plugin on every client of a cluster, once: a sysbatch
# job runs one allocation on each eligible client and ends. Each allocation prints its
# client's reports (`nomad alloc logs`) and fails when a plugin there fails a required
# check, so `nomad job status dhv-check-fleet` shows which clients to look at.
#
# Needs on each client: dhv (at DHV below), and the raw_exec driver enabled.
# raw_exec runs the check as the agent's user (root), as the agent runs its plugins;
# the exec driver's chroot and dropped capabilities would make the check judge
# something other than what the agent meets. Set PLUGIN_DIR to the clients'
# host_volume_plugin_dir (<data_dir>/host_volume_plugins by default).
job "dhv-check-fleet" {
  type      = "sysbatch"
  node_pool = "all"

  group "check" {
    task "check" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args = ["-c", <<-SCRIPT
          status=0
          for plugin in "$PLUGIN_DIR"/*; do
            [ -f "$plugin" ] && [ -x "$plugin" ] || continue
            echo "== $(hostname): $plugin"
            "$DHV" check "$plugin" --capacity-max "$CAPACITY_MAX" || status=1
          done
          exit $status
          SCRIPT
        ]
      }

      env {
        DHV          = "/usr/local/bin/dhv"
        PLUGIN_DIR   = "/opt/nomad/data/host_volume_plugins"
        CAPACITY_MAX = "1GiB"
      }

      resources {
        cpu    = 500
        memory = 512
      }
    }
  }
}
