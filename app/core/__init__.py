"""Qt-free glue between the Studio and the `dtmr` library: what the workers run and the UI shows."""
