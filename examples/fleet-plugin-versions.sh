#!/bin/sh
# The host volume plugins of every client of a cluster and their versions, one line each:
# <node name> <plugin ID> <version>, sorted by plugin and version so a rollout's stragglers
# stand out. A client fingerprints each plugin it finds as the node attribute
# plugins.host_volume.<ID>.version; this reads them through Nomad's CLI (NOMAD_ADDR and
# NOMAD_TOKEN as usual) and jq.
set -eu
for node in $(nomad node status -json | jq -r '.[].ID'); do
  nomad node status -json "$node" | jq -r '
    .Name as $node
    | .Attributes | to_entries[]
    | select(.key | test("^plugins\\.host_volume\\..+\\.version$"))
    | [$node, (.key | ltrimstr("plugins.host_volume.") | rtrimstr(".version")), .value]
    | @tsv'
done | sort -t "$(printf '\t')" -k2,2 -k3,3V
