# Sourced by scripts/ensure-*.sh: installs Debian packages a test needs when its tool is missing
# (CI starts from a clean clone and a clean machine). Quiet on success: apt's progress goes to a
# log printed only when the install fails.
#   ensure_debian_packages <name> <override-variable> <check-command> <package>...
# <check-command> (a shell function or command) must succeed once the tool is usable; when the
# override variable (e.g. CHROMIUM_PATH) is set, nothing is installed: it must point at a working tool.
ensure_debian_packages() {
  local name="$1" override="$2" check="$3"
  shift 3
  if "$check"; then return 0; fi
  if [ -n "${!override:-}" ]; then
    echo "ensure-$name: $override=${!override} does not run; point it at a working binary or unset it to use Debian's." >&2
    return 1
  fi
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "ensure-$name: $name is missing; install Debian's package as root: apt-get install --no-install-recommends $*" >&2
    return 1
  fi
  local log
  log="$(mktemp)"
  # A package's service is not started (policy-rc.d refuses it): tests run their own, on loopback.
  local policy=/usr/sbin/policy-rc.d placed_policy=false
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && placed_policy=true
  fi
  local ok=true
  # Test files run in parallel and may install at the same time: wait for apt's and dpkg's locks.
  local wait=(-o DPkg::Lock::Timeout=300)
  { apt-get "${wait[@]}" update -q && DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -q --no-install-recommends "$@"; } >"$log" 2>&1 || ok=false
  if $placed_policy; then rm -f "$policy"; fi
  if ! $ok; then
    cat "$log" >&2
    rm -f "$log"
    echo "ensure-$name: apt-get could not install $* (see above)." >&2
    return 1
  fi
  rm -f "$log"
  if ! "$check"; then
    echo "ensure-$name: $* installed, but $name still does not run." >&2
    return 1
  fi
}
