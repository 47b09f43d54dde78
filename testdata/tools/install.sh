#!/usr/bin/env bash
# Installs the pinned test tools (package-lock.json) into testdata/tools/node_modules.
# Called by .ci/run; safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
# The platform package marks its binary executable in a postinstall script, which npm may be
# configured not to run: do it here.
multitool=node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
if [ -f "$multitool" ]; then
    chmod u+x "$multitool"
fi
