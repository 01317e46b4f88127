"""TLS and mutual TLS: a throwaway CA and certificates for 127.0.0.1 and localhost, a referee serving TLS, and
the Python SDK connecting with its TLS options; plaintext to a TLS referee fails, and so does mutual TLS without
a client certificate."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from referee.rules.policies import random_policy
from referee.service.server import EmbeddedReferee, server_credentials
from referee.service.session import TimeControl
from rummy.referee.v1 import referee_pb2 as pb
from rummy.referee.v1 import referee_pb2_grpc as pb_grpc
from rummybot.bots.base import PolicyBot
from rummybot.sdk import run_bot, tls_credentials


def _cert(subject: str, key, issuer_name, issuer_key, *, ca: bool, usage=None, names=()) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
         .issuer_name(issuer_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if usage:
        b = b.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if names:
        b = b.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, Path]:
    """A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate, as PEM files."""
    folder = tmp_path_factory.mktemp("pki")
    out: dict[str, Path] = {}

    def save(name: str, cert: x509.Certificate, key) -> None:
        out[f"{name}_cert"] = folder / f"{name}.crt"
        out[f"{name}_cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        out[f"{name}_key"] = folder / f"{name}.key"
        out[f"{name}_key"].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rummy test CA")])
    save("ca", _cert("rummy test CA", ca_key, ca_name, ca_key, ca=True), ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    save("server", _cert("localhost", server_key, ca_name, ca_key, ca=False, usage=ExtendedKeyUsageOID.SERVER_AUTH,
                         names=(x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")))), server_key)
    client_key = ec.generate_private_key(ec.SECP256R1())
    save("client", _cert("a bot", client_key, ca_name, ca_key, ca=False, usage=ExtendedKeyUsageOID.CLIENT_AUTH),
         client_key)
    return out


def _list_variants(address: str, creds: grpc.ChannelCredentials | None) -> list[str]:
    channel = grpc.secure_channel(address, creds) if creds else grpc.insecure_channel(address)
    with channel:
        reply = pb_grpc.RefereeServiceStub(channel).ListVariants(pb.ListVariantsRequest(), timeout=5)
        return [v.name for v in reply.variants]


def _play_a_match(address: str, creds: grpc.ChannelCredentials) -> pb.MatchResult:
    async def go():
        async with grpc.aio.secure_channel(address, creds) as ch:
            stub = pb_grpc.RefereeServiceStub(ch)
            created = await stub.CreateMatch(pb.CreateMatchRequest(variant="indian", seed="tls",
                                                                   seats=[pb.SeatSpec(), pb.SeatSpec()]))
            await asyncio.gather(*(run_bot(PolicyBot(f"b{i}", lambda v: random_policy, seed=i), address,
                                           match_id=created.match_id, token=t, credentials=creds)
                                   for i, t in enumerate(created.seat_tokens)))
            return (await stub.GetResult(pb.GetResultRequest(match_id=created.match_id, wait=True))).result

    return asyncio.run(go())


@pytest.fixture(scope="module")
def tls_referee(pki):
    creds = server_credentials(pki["server_cert"], pki["server_key"])
    with EmbeddedReferee(credentials=creds, default_time=TimeControl(connect_ms=5000)) as ref:
        yield ref


@pytest.fixture(scope="module")
def mtls_referee(pki):
    creds = server_credentials(pki["server_cert"], pki["server_key"], pki["ca_cert"])
    with EmbeddedReferee(credentials=creds, default_time=TimeControl(connect_ms=5000)) as ref:
        yield ref


def test_sdk_bots_play_a_match_over_tls(tls_referee, pki):
    result = _play_a_match(tls_referee.address, tls_credentials(str(pki["ca_cert"])))
    assert result.status == pb.MATCH_STATUS_FINISHED


def test_plaintext_to_a_tls_referee_fails(tls_referee):
    with pytest.raises(grpc.RpcError) as err:
        _list_variants(tls_referee.address, None)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_client_that_does_not_trust_the_referees_ca_fails(tls_referee, pki):
    with pytest.raises(grpc.RpcError) as err:
        _list_variants(tls_referee.address, tls_credentials(str(pki["client_cert"])))  # not a CA: nothing trusted
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_refuses_a_client_without_a_certificate_and_admits_one_with(mtls_referee, pki):
    with pytest.raises(grpc.RpcError) as err:
        _list_variants(mtls_referee.address, tls_credentials(str(pki["ca_cert"])))
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    creds = tls_credentials(str(pki["ca_cert"]), str(pki["client_cert"]), str(pki["client_key"]))
    assert "indian" in _list_variants(mtls_referee.address, creds)
    assert _play_a_match(mtls_referee.address, creds).status == pb.MATCH_STATUS_FINISHED


def test_referee_serve_takes_the_tls_flags(pki, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "referee.tools.cli", "serve", "--port", "0", "--records", str(tmp_path),
                             "--tls-cert", str(pki["server_cert"]), "--tls-key", str(pki["server_key"]),
                             "--tls-client-ca", str(pki["ca_cert"]), "--log-level", "warning"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = json.loads(proc.stdout.readline())["address"]
        creds = tls_credentials(str(pki["ca_cert"]), str(pki["client_cert"]), str(pki["client_key"]))
        assert "indian" in _list_variants(address, creds)
        with pytest.raises(grpc.RpcError):
            _list_variants(address, None)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
