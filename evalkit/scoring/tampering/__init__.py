"""What the agent could have forged, caught by what evalkit alone witnessed: the scripted
server's record of the turns it served (`served.py`) and evalkit's own re-runs of the observed
scripts on the final tree (`reproduced.py`)."""
