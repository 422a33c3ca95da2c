# slurm-peer/lib.sh -- sourced by setup.sh and dbd.sh (needs their log function).
# install_missing PKG... : apt-get install the Debian packages that are not installed yet.
# policy-rc.d in this sandbox stops the packages from starting services; the scripts
# start their own daemons with private paths.
install_missing() {
  local need=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  [ ${#need[@]} -gt 0 ] || return 0
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}
