"""The scripted server's encodings for wire protocols other than Anthropic's: the same
script, policies and faults, spoken as another agent's API expects."""
