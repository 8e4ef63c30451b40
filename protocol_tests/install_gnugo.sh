#!/bin/sh
# Installs GNU Go (Debian package `gnugo`, binary /usr/games/gnugo) for
# tests/gnugo_crosscheck.rs. Harmless otherwise: does nothing when GNU Go is already there,
# and only prints a notice when not root or without apt-get (the test then skips itself).
set -u
for p in /usr/games/gnugo /usr/bin/gnugo /usr/local/bin/gnugo; do
    if [ -x "$p" ]; then
        echo "install_gnugo: GNU Go present at $p"
        exit 0
    fi
done
if [ "$(id -u)" != "0" ]; then
    echo "install_gnugo: not root; GNU Go not installed (the cross-check test will skip)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_gnugo: no apt-get; GNU Go not installed (the cross-check test will skip)"
    exit 0
fi
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnugo >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnugo >/dev/null 2>&1; }; then
    echo "install_gnugo: installed GNU Go"
else
    echo "install_gnugo: apt-get could not install gnugo (the cross-check test will skip)"
fi
exit 0
