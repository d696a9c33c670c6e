#!/usr/bin/env bash
# Installs the Debian 12 packages wormhole needs. Idempotent and quiet when everything is there.
# --slurm: also Slurm and munge (slurmctld slurmd slurm-client munge, ~8 s) for tests/e2e/test_slurm.py;
# scripts/test.sh passes it. The daemons are not configured here: the test starts its own.
set -euo pipefail
pkgs=(cmake g++ ninja-build pkg-config libgtest-dev
      openmpi-bin libopenmpi-dev libtbb-dev libhdf5-openmpi-dev hdf5-tools
      libbliss-dev libmetis-dev libcli11-dev libfmt-dev libtomlplusplus-dev
      libprotobuf-dev protobuf-compiler nlohmann-json3-dev
      python3-h5py python3-numpy python3-matplotlib python3-protobuf)
for a in "$@"; do
  case "$a" in
    --slurm) pkgs+=(slurmctld slurmd slurm-client munge) ;;
    *) echo "setup.sh: unknown option $a (use --slurm)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}" >&2
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
