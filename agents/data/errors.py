"""Errors the data layer raises. Commands turn any DataError into one clear line on stderr and exit 2."""


class DataError(Exception):
    """Bad or missing input data; the message is written for the person who gave it."""


class UnknownTicker(DataError):
    pass


class MalformedData(DataError):
    pass


class OutOfRange(DataError):
    """A date (for example an as-of date) outside what the data covers."""


class UnsupportedFiler(DataError):
    pass
