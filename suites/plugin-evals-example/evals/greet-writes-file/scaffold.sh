#!/usr/bin/env bash
# The project every case starts in: a team page the greeting is for.
set -euo pipefail
mkdir -p docs
printf '# Platform team\n\nWe run the build and release tooling.\n' > README.md
printf 'Ana\nBo\nChidi\n' > docs/team.txt
