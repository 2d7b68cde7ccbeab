"""Commands both front ends share (/memory, /remember, /forget, /reminders, /search, /stats):
each does the work and returns the reply text in the user's language; Telegram and the terminal
only deliver it."""
