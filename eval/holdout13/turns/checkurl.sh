#!/bin/bash
# usage: checkurl.sh owner/repo/issues/N ...   prints only unused ones
for u in "$@"; do r=$(grep -rlF "https://github.com/$u\"" /work/main/eval /work/holdout13 2>/dev/null | grep -v '^/work/holdout13/turns/' | head -1); [ -z "$r" ] && echo "FREE $u" || echo "used $u"; done
