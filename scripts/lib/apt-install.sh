# Sourced by the install-*.sh scripts: installs Debian packages with apt-get, as root or through
# sudo, and stops with a sentence a person can act on when this machine cannot (no apt-get, no
# sudo, a password sudo cannot ask for, a mirror out of reach).

# apt_install "<what needs them>" package...
apt_install() {
  local why="$1"
  shift
  local list="$*"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "Cannot install ${list} (${why}): this machine has no apt-get. Install them with your system's package manager, then run the command again." >&2
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "Cannot install ${list} (${why}): it needs root, and sudo is not installed. Run as root: apt-get install ${list}; then run the command again." >&2
      exit 1
    fi
    # -n: in CI or a pipe, fail at once rather than wait for a password nobody can type.
    if [ ! -t 0 ] && ! sudo -n true 2>/dev/null; then
      echo "Cannot install ${list} (${why}): sudo asks for a password and there is no terminal to type it in. Run: sudo apt-get install ${list}; then run the command again." >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  echo "Installing Debian's ${list} (${why})…"
  if ! "${sudo[@]}" apt-get update -qq; then
    echo "Cannot install ${list}: apt-get could not read Debian's package lists (is the mirror reachable?)." >&2
    exit 1
  fi
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null; then
    echo "Cannot install ${list}: apt-get install failed (see its message above)." >&2
    exit 1
  fi
}
