#!/usr/bin/env bash
# Run the assistant: ./bot.sh (Telegram bot), ./bot.sh chat (terminal chat), ./bot.sh doctor (checks).
# Sets up .venv on first use with what the bot needs only (./test.sh adds the development tools).
set -euo pipefail
cd "$(dirname "$0")"
source scripts/venv.sh
exec "$VENV/bin/python" -m bot "$@"
