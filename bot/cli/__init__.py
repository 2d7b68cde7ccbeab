"""The terminal front end: the chat in a terminal (``python -m bot chat``, ``assistant-chat``) and
``python -m bot search``.

- terminal.py: the chat as a program (command line, settings, readline); ``main()``
- loop.py: the session's event loop in a thread of its own; Ctrl-C kept for the main thread
- conversations.py: the list of conversations (/chats, --list)
- chat.py: one chat session, its loop and its turns (question, answer, Ctrl-C)
- commands.py: the chat's slash commands
- texts.py: the chat's own texts and its language
- render.py: whether and how answers are rendered (imports nothing heavy)
- stream.py, markdown.py: streaming rendered Markdown with rich (imported only for the first answer)
- search.py: ``python -m bot search``, a chat's history as JSON lines

This file imports nothing: ``python -m bot search`` must not load the chat, and the chat must not
load rich before its prompt shows.
"""
