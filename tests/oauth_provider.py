"""A stand-in OAuth 1.0a provider, answering as MediaWiki's Extension:OAuth does at ``index.php``.

The local MediaWiki has no OAuth extension and none can be installed here, so the review page's
handshake (mwoauth's initiate, authenticate, token and identify) is tested against this: oauthlib's
provider side checks every signature, token and verifier; ``Special:OAuth/authenticate`` grants the
request for the user the test names (the consent a person gives on the wiki) and sends the browser to
the consumer's registered callback; ``Special:OAuth/identify`` answers a JWT signed with the
consumer's secret, as Extension:OAuth does. ``forge_identity`` makes it sign with another key (a
forged answer the consumer must refuse).
"""
from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlencode

import jwt
from flask import Flask, redirect, request
from oauthlib.oauth1 import AccessTokenEndpoint, RequestTokenEndpoint, RequestValidator, ResourceEndpoint
from werkzeug.serving import make_server


class _Validator(RequestValidator):
    """The provider's records: one consumer, its request tokens, verifiers and access tokens."""

    def __init__(self, key: str, secret: str, callback: str) -> None:
        super().__init__()
        self.key, self.secret, self.callback = key, secret, callback
        self.request_tokens: dict[str, str] = {}
        self.verifiers: dict[str, tuple[str, str]] = {}  # request token -> (verifier, user)
        self.access_tokens: dict[str, tuple[str, str]] = {}  # access token -> (secret, user)
        self.nonces: set[tuple] = set()

    enforce_ssl = False  # the test wiki is served over http on 127.0.0.1
    allowed_signature_methods = ("HMAC-SHA1",)
    dummy_client = "dummy_client_key_000000000000000"
    dummy_request_token = "dummy_request_token_00000000000"
    dummy_access_token = "dummy_access_token_000000000000"
    client_key_length = request_token_length = access_token_length = verifier_length = nonce_length = (10, 64)

    def check_client_key(self, key): return key.isalnum()
    def check_request_token(self, token): return token.isalnum()
    def check_access_token(self, token): return token.isalnum()
    def check_nonce(self, nonce): return nonce.isalnum()
    def check_verifier(self, verifier): return verifier.isalnum()
    def validate_client_key(self, key, request): return key == self.key
    def get_client_secret(self, key, request): return self.secret if key == self.key else "dummy"
    def get_default_realms(self, key, request): return []
    def validate_requested_realms(self, key, realms, request): return True
    def validate_redirect_uri(self, key, uri, request): return uri == "oob"
    def get_request_token_secret(self, key, token, request): return self.request_tokens.get(token, "dummy")
    def get_access_token_secret(self, key, token, request): return self.access_tokens.get(token, ("dummy",))[0]
    def validate_request_token(self, key, token, request): return token in self.request_tokens
    def validate_access_token(self, key, token, request): return token in self.access_tokens
    def validate_realms(self, key, token, request, uri=None, realms=None): return True
    def get_realms(self, token, request): return []
    def get_redirect_uri(self, token, request): return self.callback

    def validate_timestamp_and_nonce(self, key, timestamp, nonce, request, request_token=None, access_token=None):
        seen = (key, timestamp, nonce, request_token, access_token)
        if seen in self.nonces:
            return False
        self.nonces.add(seen)
        return True

    def save_request_token(self, token, request):
        self.request_tokens[token["oauth_token"]] = token["oauth_token_secret"]

    def validate_verifier(self, key, token, verifier, request):
        return self.verifiers.get(token, ("", ""))[0] == verifier

    def verify_request_token(self, token, request): return token in self.request_tokens
    def verify_realms(self, token, realms, request): return True

    def invalidate_request_token(self, key, token, request):
        self.request_tokens.pop(token, None)

    def save_access_token(self, token, request):
        user = self.verifiers.pop(request.resource_owner_key)[1]
        self.access_tokens[token["oauth_token"]] = (token["oauth_token_secret"], user)


class StandInOAuth:
    """The provider, served on 127.0.0.1: ``index_url`` is its ``index.php`` (mwoauth's ``mw_uri``)."""

    def __init__(self, callback: str, *, user: str) -> None:
        self.key, self.secret = secrets.token_hex(16), secrets.token_hex(20)
        self.user = user  # who grants the tool access on the authenticate page
        self.forge_identity = False
        self.v = _Validator(self.key, self.secret, callback)
        self.app = self._app()
        self._server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.index_url = f"http://127.0.0.1:{self._server.server_port}/index.php"

    def _app(self) -> Flask:
        app = Flask(__name__)
        request_tokens, access_tokens, resources = (RequestTokenEndpoint(self.v), AccessTokenEndpoint(self.v),
                                                    ResourceEndpoint(self.v))

        @app.route("/index.php", methods=["GET", "POST"])
        def index():
            title, args = request.args.get("title", ""), (request.url, request.method,
                                                          request.get_data(as_text=True), dict(request.headers))
            if title == "Special:OAuth/initiate":
                headers, body, status = request_tokens.create_request_token_response(*args)
                return body, status, headers
            if title == "Special:OAuth/authenticate":  # a person allows the tool, on the wiki
                token = request.args.get("oauth_token", "")
                if token not in self.v.request_tokens or request.args.get("oauth_consumer_key") != self.key:
                    return "unknown request token", 400
                verifier = secrets.token_hex(16)
                self.v.verifiers[token] = (verifier, self.user)
                return redirect(f"{self.v.callback}?{urlencode({'oauth_verifier': verifier, 'oauth_token': token})}")
            if title == "Special:OAuth/token":
                headers, body, status = access_tokens.create_access_token_response(*args)
                return body, status, headers
            if title == "Special:OAuth/identify":
                ok, oauth_request = resources.validate_protected_resource_request(*args)
                if not ok:
                    return {"error": "mwoauth-invalid-authorization", "message": "invalid signature"}, 401
                user = self.v.access_tokens[oauth_request.resource_owner_key][1]
                now = int(time.time())
                claims = {"iss": f"http://{request.host}", "sub": 1, "aud": self.key, "exp": now + 100, "iat": now,
                          "nonce": oauth_request.oauth_params["oauth_nonce"], "username": user, "blocked": False}
                return jwt.encode(claims, "forged" * 6 if self.forge_identity else self.secret, algorithm="HS256")
            return f"no such page {title}", 404

        return app

    @contextmanager
    def serving(self):
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            thread.join(timeout=10)
