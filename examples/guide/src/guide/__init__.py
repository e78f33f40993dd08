"""The Burn Book's guide in burn-py: model, data, training and inference."""
