"""Losses in float32, averaged over the global batch: masked LM, replaced-token detection,
the focal generator loss and the adversarial generator's REINFORCE loss."""
