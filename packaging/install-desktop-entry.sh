#!/bin/sh
# Adds DTMR Studio to this user's application menu (no root needed); `--remove` takes it out again.
# Shipped at the top of the frozen build's folder (dist/dtmr-studio-<variant>/); the menu entry starts the
# `dtmr-studio` executable next to this script, wherever the folder was unpacked.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
entry="$data/applications/dtmr-studio.desktop"
png="$data/icons/hicolor/256x256/apps/dtmr-studio.png"
svg="$data/icons/hicolor/scalable/apps/dtmr-studio.svg"

if [ "${1:-}" = "--remove" ]; then
    rm -f "$entry" "$png" "$svg"
    echo "removed $entry and the icons"
    exit 0
fi
if [ ! -x "$here/dtmr-studio" ]; then
    echo "install-desktop-entry.sh: $here/dtmr-studio not found; run this script from the unpacked build" >&2
    exit 1
fi
icons="$here/_internal/resources/icons"
mkdir -p "$(dirname "$entry")" "$(dirname "$png")" "$(dirname "$svg")"
cp "$icons/dtmr-studio.png" "$png"
cp "$icons/dtmr-studio.svg" "$svg"
# Exec takes a quoted path (spaces allowed); TryExec is a plain path.
sed -e "s|^Exec=dtmr-studio |Exec=\"$here/dtmr-studio\" |" -e "s|^TryExec=.*|TryExec=$here/dtmr-studio|" \
    "$here/dtmr-studio.desktop" > "$entry"
echo "installed $entry (starts $here/dtmr-studio)"
