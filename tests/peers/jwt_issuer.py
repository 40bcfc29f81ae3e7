"""A test authorization server's signing half: it makes an RSA (kid
"rsa-1") and an EC P-256 (kid "ec-1") key, serves their public JWKS over
HTTP on the loopback, and signs the tokens the Rust tests ask for. Run by
tests/all/oauth.rs; pyjwt and cryptography are installed by
tests/peers/install-mcp.

usage: jwt_issuer.py ISSUER
Prints one JSON line: {"jwks_url": ..., "issuer": ...}. Then reads one JSON
request a line on stdin and answers one token a line on stdout:
  {"alg": "RS256" | "ES256" | "none" | "HS256-public",
   "kid": "rsa-1",                    (default: the alg's key)
   "key": "published" | "rogue",      (rogue: an unpublished key of that type)
   "claims": {...},                   (as they are, besides:)
   "exp_in": SECONDS, "nbf_in": SECONDS}  (exp/nbf relative to now)
"HS256-public" signs with HMAC-SHA256 keyed by the RSA public key's PEM:
the key-confusion attack. GET /fetches answers how many times the JWKS was
fetched.
"""
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = sys.argv[1]
KEYS = {
    "RS256": (rsa.generate_private_key(public_exponent=65537, key_size=2048), "rsa-1"),
    "ES256": (ec.generate_private_key(ec.SECP256R1()), "ec-1"),
}
ROGUE = {
    "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "ES256": ec.generate_private_key(ec.SECP256R1()),
}
FETCHES = [0]


def jwks():
    keys = []
    for alg, (key, kid) in KEYS.items():
        jwk = json.loads(jwt.algorithms.get_default_algorithms()[alg].to_jwk(key.public_key()))
        jwk.update({"kid": kid, "use": "sig", "alg": alg})
        keys.append(jwk)
    return {"keys": keys}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/fetches":
            body = json.dumps({"fetches": FETCHES[0]}).encode()
        else:
            FETCHES[0] += 1
            body = json.dumps(jwks()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header, claims):
    return b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())


def token(request):
    now = int(time.time())
    claims = dict(request.get("claims", {}))
    if "exp_in" in request:
        claims["exp"] = now + request["exp_in"]
    if "nbf_in" in request:
        claims["nbf"] = now + request["nbf_in"]
    alg = request["alg"]
    if alg == "none":
        return unsigned({"alg": "none", "typ": "JWT"}, claims) + "."
    if alg == "HS256-public":
        pem = KEYS["RS256"][0].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        body = unsigned({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, claims)
        return body + "." + b64(hmac.new(pem, body.encode(), hashlib.sha256).digest())
    key, kid = KEYS[alg]
    if request.get("key") == "rogue":
        key = ROGUE[alg]
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": request.get("kid", kid)})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    print(json.dumps({"jwks_url": f"http://127.0.0.1:{port}/jwks", "issuer": ISSUER}), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(token(json.loads(line)), flush=True)


main()
