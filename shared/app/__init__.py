"""Application rules several callers share (gateway, stages, CLI): each lives here once."""
