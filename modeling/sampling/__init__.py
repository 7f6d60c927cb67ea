"""Replay-exact sampling of replacement tokens, TEAMS' candidate sets and ELECTRA-HP's
hardness-weighted sampling distributions."""
