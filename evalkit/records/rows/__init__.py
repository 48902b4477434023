"""What a row says beyond its verdict: which agent, judge, subject, policy and CLI version."""
