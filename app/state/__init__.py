"""Qt-free state objects that announce their changes through `Signal`s; widgets only listen."""
