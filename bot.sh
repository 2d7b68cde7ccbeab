#!/usr/bin/env bash
# Run the assistant: ./bot.sh (Telegram bot) or ./bot.sh chat (terminal chat). Sets up .venv on first use.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/venv.sh
exec "$VENV/bin/python" -m bot "$@"
