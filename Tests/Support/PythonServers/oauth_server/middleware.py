"""One JSON line per request, appended to the file given with ``--request-log``.

Every line has ``method``, ``path``, ``endpoint`` (the route's name: ``token``, ``revoke-token``,
``device-authorization``, ``authorize``, ``me``, ...) and ``status``. Lines of the token, revocation
and device authorization endpoints also have ``client_id`` and ``client_auth`` (the method the
client used: ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt`` or ``none``), the
token endpoint's ``grant_type``, the revocation endpoint's ``token_type_hint``, and, for an error
response, its OAuth ``error`` code (and ``client_auth_failure``, why client authentication
failed). No secret, code, assertion or token is ever written.
"""

import base64
import json
import os
import threading
import time
from urllib.parse import unquote_plus

import jwt
from django.conf import settings

from . import validators

CLIENT_ENDPOINTS = {"token", "revoke-token", "device-authorization", "introspect"}


def _client(request) -> tuple[str | None, str]:
    """The client id the request names, and how it authenticates (as sent, not as verified)."""
    authorization = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, credentials = authorization.partition(" ")
    if scheme == "Basic":
        try:
            decoded = base64.b64decode(credentials).decode()
            return unquote_plus(decoded.split(":", 1)[0]), "client_secret_basic"
        except ValueError:
            return None, "client_secret_basic"
    form = request.POST
    if "client_assertion" in form or "client_assertion_type" in form:
        client_id = form.get("client_id")
        if client_id is None:
            try:
                claims = jwt.decode(form.get("client_assertion", ""), options={"verify_signature": False})
                client_id = claims.get("sub")
            except jwt.PyJWTError:
                pass
        return client_id, "private_key_jwt"
    if "client_secret" in form:
        return form.get("client_id"), "client_secret_post"
    return form.get("client_id"), "none"


class RequestLogMiddleware:
    _lock = threading.Lock()

    def __init__(self, get_response):
        self.get_response = get_response
        self.path = settings.OAUTH_SERVER["REQUEST_LOG"]

    def __call__(self, request):
        validators.failure.reason = None
        response = self.get_response(request)
        if self.path:
            self.write(self.entry(request, response))
        return response

    def entry(self, request, response) -> dict:
        match = request.resolver_match
        endpoint = match.url_name if match else None
        entry = {
            "time": round(time.time(), 3),
            "method": request.method,
            "path": request.path,
            "endpoint": endpoint,
            "status": response.status_code,
        }
        if endpoint in CLIENT_ENDPOINTS and request.method == "POST":
            form = request.POST
            if endpoint == "token":
                entry["grant_type"] = form.get("grant_type")
            if endpoint == "revoke-token":
                entry["token_type_hint"] = form.get("token_type_hint")
            entry["client_id"], entry["client_auth"] = _client(request)
            if response.status_code >= 400:
                try:
                    entry["error"] = json.loads(response.content).get("error")
                except (ValueError, AttributeError):
                    pass
                if validators.failure.reason:
                    entry["client_auth_failure"] = validators.failure.reason
        return entry

    def write(self, entry: dict):
        line = (json.dumps(entry) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
