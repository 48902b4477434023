"""What must hold before a rep is paid for: the CLI found and its versions cached, the
credentials that reach it, doctor's checks and the preflight through the real CLI."""
