"""The model side: the model interface and its fake (model.py), the Anthropic client (client.py),
the summarizer that folds old messages into the memo (summarizer.py), and prices (pricing.py)."""
