"""Heads on an encoder's output: masked LM, replaced-token detection, TEAMS' attention task
head, SCRIPT's self-critic and copy mixture, and the fine-tuning heads (sentence, span, token;
transformers' sequence and span heads)."""
