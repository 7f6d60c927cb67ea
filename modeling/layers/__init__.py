"""The encoder and its layers: config, embeddings, Transformer blocks (plain, fused, with
relative position), and how a generator encoder shares a discriminator's."""
