"""Each objective's model (one file per pretrainer), the fine-tuning models, and the parts a
model hands to other libraries (model_parts)."""
