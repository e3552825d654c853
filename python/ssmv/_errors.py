"""The exceptions of a user error: raised with a short traceback (the public functions
re-raise them from their own frame), each naming the argument and its value."""


class InputError(ValueError):
    """A value the caller passed is wrong (a shape, a NaN in the inputs, an option)."""


class InputTypeError(TypeError):
    """A dtype or type the caller passed is wrong."""


class BinaryNotFoundError(FileNotFoundError):
    """The ssmv program is not where SSMV_BINARY, PATH or the build tree says."""


class SsmvError(ValueError):
    """ssmv refused the dump (exit code 2): `message` is what it said, `dump` the file it
    was given (kept, so that `ssmv check DUMP` shows the same), `command` what ran."""

    def __init__(self, message, command=None, dump=None, returncode=2):
        super().__init__(message)
        self.message = message
        self.command = command
        self.dump = dump
        self.returncode = returncode


USER_ERRORS = (InputError, InputTypeError, BinaryNotFoundError, SsmvError)
