"""Reference behaviour that proves the instrument: scripted model, policies, self-test."""
