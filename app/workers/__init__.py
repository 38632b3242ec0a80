"""Long-lived QThreads that run the Qt-free jobs of `app.core` and report through typed signals."""
