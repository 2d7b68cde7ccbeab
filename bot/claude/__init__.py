"""The model side: the model interface and its fake (model.py), the Claude client (client.py; the Claude API
over HTTP, without an SDK: api.py, accumulate.py), what the Models API says (modelinfo.py), the summarizer
that folds old messages into the memo (summarizer.py), and prices (pricing.py)."""
