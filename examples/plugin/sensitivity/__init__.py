"""An example study family from outside reasonlab: transformers fit a Boolean function of low
sensitivity (the majority of n bits) more easily than one of maximal sensitivity (their
parity). reasonlab imports every module of this package when it loads the plugin."""
