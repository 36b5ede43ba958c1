# Reference vectors for the local embedder's test: sentence-transformers on the same model files.
import json, sys
from sentence_transformers import SentenceTransformer
model_dir, out = sys.argv[1], sys.argv[2]
sentences = [
    "Archive the draft I never finished.",
    "Will it rain in Lisbon tomorrow?",
    "Send an email to the landlord about the broken heater.",
    "Create a pull request for the fix on the main branch.",
    "What's my checking account balance?",
    "Book a table for four at an Italian place on Friday at 8pm.",
    "Tuck my unfinished email to the bank out of sight, but don't throw it away.",
    "Cancel Thursday's dentist appointment.",
    "Translate 'good morning' into Japanese: おはようございます",
    "Der Kühlschrank ist kaputt; bitte einen Techniker schicken.",
    "¿Cuál es el pronóstico del tiempo para Madrid?",
    "restart the k8s pod api-7f9c in namespace prod-eu-west-1",
    "SELECT * FROM invoices WHERE due_date < NOW() AND paid = false;",
    "🚀 ship it!!! 🎉",
    "a",
    "   leading and trailing spaces   ",
    "Line one.\nLine two.\tTabbed.",
    "mail__archive_draft. Archive a draft in mail. Arguments: draft_id; Identifier of the draft.",
    "The quick brown fox jumps over the lazy dog. " * 60,
    "Ünïcödé àccents, naïve café façade, and the résumé of a coöperative.",
]
model = SentenceTransformer(model_dir, device="cpu")
vectors = model.encode(sentences, normalize_embeddings=True, convert_to_numpy=True)
json.dump({"sentences": sentences, "vectors": [[round(float(x), 7) for x in v] for v in vectors]}, open(out, "w"), ensure_ascii=False)
print(model.max_seq_length, vectors.shape)
