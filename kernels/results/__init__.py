"""Result rows and their texts: the ladder table's rows, printed tables, the report of a
recording and the CLI's progress line. No GPU, no Qt (the app shows these rows).
"""
