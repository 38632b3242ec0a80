"""Qt widgets. They listen to the state objects of `app.state` and never own state themselves."""
