"""A store that keeps the client's last-known state and seat in one JSON file."""

import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, Optional, Union

from ._online import LicenseState, StoredActivation

_log = logging.getLogger("licensing_verifier")


class FileStore:
    """Keeps the last-known state and this machine's seat in a JSON file, readable by its owner only.

    The file holds the machine token, a secret: keep it where only the application can read it.
    Every change writes a new file and renames it over the old one, so a crash never leaves half a
    file. A file that cannot be read counts as empty.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def load(self) -> Optional[LicenseState]:
        return LicenseState.from_dict(self._read().get("state"))

    def save(self, state: LicenseState) -> None:
        self._update("state", state.to_dict())

    def load_activation(self) -> Optional[StoredActivation]:
        return StoredActivation.from_dict(self._read().get("activation"))

    def save_activation(self, stored: Optional[StoredActivation]) -> None:
        self._update("activation", None if stored is None else stored.to_dict())

    def __repr__(self) -> str:
        return "FileStore(%r)" % str(self.path)

    def _read(self) -> Dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as file:
                data = json.load(file)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            _log.warning("%s cannot be read, so it counts as empty: %s", self.path, error)
            return {}
        return data if isinstance(data, dict) else {}

    def _update(self, key: str, value: Any) -> None:
        with self._lock:
            data = self._read()
            data[key] = value
            directory = self.path.parent
            directory.mkdir(parents=True, exist_ok=True)
            # mkstemp creates the file readable and writable by its owner only.
            handle, temporary = tempfile.mkstemp(prefix=".%s." % self.path.name, dir=str(directory))
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as file:
                    json.dump(data, file, indent=2)
                    file.write("\n")
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
                raise
