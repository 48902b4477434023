"""What the agent's world shows it, as scoring reads it: the words that would name the
measurement (`markers.py`), the scripted server's scan of what reached the model
(`leaks.py`), and each world path spelled back at the rep's own folders (`places.py`)."""
