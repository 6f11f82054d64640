class ServiceError(Exception):
    """A workflow refused what it was asked to do; the message is shown to the person who asked."""
