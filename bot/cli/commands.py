"""The slash commands of the terminal chat: /help, /history, /summary, /search, /memory, /remember,
/forget, /reminders, /model, /chats, /stats, /export, /reset, /retry and /quit.

``SlashCommands`` is the part of ``ChatSession`` (bot/cli/chat.py) that answers a line starting with
'/'. The commands both front ends share give the same texts as in Telegram (bot/commands/); the
session provides the output (``say``, ``error``) and the turns (``send``, ``retry``).
"""

from __future__ import annotations

import asyncio
import shutil
from typing import TYPE_CHECKING, TextIO

from bot.cli.conversations import conversations_text, pick
from bot.cli.texts import layout_help, text
from bot.cli.transfer import export_here
from bot.commands.facts import forget_text, memory_text, remember_text
from bot.commands.model import model_text
from bot.commands.reminders import reminders_text
from bot.commands.search import search_text
from bot.tools.reminders import is_telegram_chat
from memory.content import display_text
from memory.conversations import list_conversations

if TYPE_CHECKING:
    from bot.commands.usage import TerminalUsage
    from bot.core.ask import Assistant
    from memory.conversations import Conversation
    from memory.reminders import ReminderStore

COMMANDS = (
    "/help", "/history", "/summary", "/search", "/memory", "/remember", "/forget", "/reminders", "/model", "/chats",
    "/stats", "/export", "/reset", "/retry", "/quit",
)  # fmt: skip


class SlashCommands:
    """The slash commands of one terminal conversation; mixed into ``ChatSession``."""

    assistant: Assistant
    chat_id: str
    lang: str
    reminders: ReminderStore | None
    usage: TerminalUsage | None
    _listed: list[Conversation]  # the last list /chats showed (its numbers)
    out: TextIO

    if TYPE_CHECKING:  # provided by ChatSession

        def say(self, message: str) -> None: ...

        def error(self, message: str) -> None: ...

        def note(self, message: str) -> None: ...

        async def retry(self) -> None: ...

    async def command(self, line: str) -> bool:
        """Run the slash command ``line`` (stripped, starting with '/'); False when the session should end."""
        command = line.split()[0].lower()
        if command in ("/quit", "/exit"):
            return False
        if command == "/help":
            self.say(layout_help(text("help", self.lang), shutil.get_terminal_size().columns))
        elif command == "/history":
            self.show_history()
        elif command == "/summary":
            self.show_summary()
        elif command == "/search":
            argument = line.split(maxsplit=1)[1] if " " in line else ""
            self.say(await asyncio.to_thread(search_text, self.assistant, self.chat_id, argument, self.lang))
        elif command == "/reminders":
            await self.reminders_command(line.split(maxsplit=1)[1] if " " in line else "")
        elif command in ("/memory", "/remember", "/forget"):
            await self.facts_command(command, line.split(maxsplit=1)[1] if " " in line else "")
        elif command == "/model":
            argument = line.split(maxsplit=1)[1] if " " in line else ""
            self.say(await model_text(self.assistant.model, argument, self.lang))
        elif command == "/chats":
            await self.chats(line.split(maxsplit=1)[1].strip() if " " in line else "")
        elif command == "/stats" and self.usage is not None:
            self.say(await asyncio.to_thread(self.usage.text, self.chat_id, self.lang))
        elif command == "/export":
            root, out = self.assistant.transcript.root, self.out
            # the export itself goes to ``out``; how many were written is a notice (stderr on a pipe)
            self.note(await asyncio.to_thread(export_here, root, self.chat_id, line, self.lang, out))
        elif command == "/reset":
            await self.reset()
        elif command == "/retry":
            await self.retry()
        else:
            self.error(text("unknown", self.lang, cmd=command, commands=" ".join(COMMANDS)))
        return True

    async def chats(self, argument: str) -> None:
        """/chats lists the conversations; /chats <number|name> continues one (an archived one is
        brought back as its chat's current conversation, the current one archived first)."""
        transcript, tz = self.assistant.transcript, self.assistant.timezone
        if not argument:
            self._listed = await asyncio.to_thread(list_conversations, transcript)
            self.say(conversations_text(self._listed, self.chat_id, tz, self.lang))
            return
        conversation = await asyncio.to_thread(pick, transcript, argument, self._listed)
        if conversation is None:
            self.error(text("chats.unknown", self.lang, name=argument))
            return
        self._listed = []  # the numbers change with the move
        if conversation.archived:
            previous = await self.assistant.resume(conversation)
            lines = [text("chats.resumed", self.lang, name=conversation.name, chat=conversation.chat_id)]
            if previous:
                lines.append(text("chats.put_aside", self.lang, previous=previous))
            self.note(" ".join(lines))
        self.chat_id = conversation.chat_id
        n = len(await asyncio.to_thread(self.assistant.history, self.chat_id))
        self.note(text("chats.switched", self.lang, chat=self.chat_id, n=n))

    async def reset(self) -> None:
        name = await self.assistant.reset(self.chat_id)
        self.say(text("reset.done", self.lang, name=name) if name else text("reset.empty", self.lang))

    async def facts_command(self, command: str, argument: str) -> None:
        """/memory, /remember <text>, /forget <n|all> — the same texts as in Telegram."""
        run = {"/memory": lambda: memory_text(self.assistant, self.chat_id, self.lang)}
        run["/remember"] = lambda: remember_text(self.assistant, self.chat_id, argument, self.lang)
        run["/forget"] = lambda: forget_text(self.assistant, self.chat_id, argument, self.lang)
        self.say(await asyncio.to_thread(run[command]))

    async def reminders_command(self, argument: str) -> None:
        """/reminders [cancel <id>] — the same texts as in Telegram."""
        if self.reminders is None or not is_telegram_chat(self.chat_id):
            self.error(text("reminders.none_here", self.lang))
            return
        store, tz = self.reminders, self.assistant.timezone
        self.say(await asyncio.to_thread(reminders_text, store, self.chat_id, argument, self.lang, tz))

    def show_history(self) -> None:
        messages = self.assistant.history(self.chat_id)
        if not messages:
            self.say(text("history.empty", self.lang))
            return
        lines = [text("history.header", self.lang, n=len(messages))]
        for m in messages:
            who = text("role.user" if m.get("role") == "user" else "role.assistant", self.lang)
            body = display_text(m.get("content")).replace("\n", "\n    ")
            lines.append(f"{who}: {body}")
        self.say("\n".join(lines))

    def show_summary(self) -> None:
        summary = self.assistant.summary(self.chat_id)
        if not summary:
            self.say(text("summary.none", self.lang))
            return
        self.say(text("summary.header", self.lang) + "\n" + summary)
