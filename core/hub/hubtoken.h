#pragma once

// The access token for the Hugging Face Hub, which gated models (Llama, Gemma) and private ones
// need. It is looked for where the Hub's own tools look, so a token given to
// `huggingface-cli login` works here too:
//   1. $HF_TOKEN;
//   2. the system's keychain (macOS Keychain, Windows Credential Manager, or the Secret Service
//      of a Linux desktop through `secret-tool`), where Tandem saved it;
//   3. the token file, $HF_TOKEN_PATH or $HF_HOME/token, which huggingface-cli writes.
// A token is saved in the keychain where there is one, otherwise in the token file, readable
// by its owner only.

#include "common/expected.h"

#include <QString>

namespace tandem::hub {

struct Token {
    QString value;
    QString where; // "HF_TOKEN", "keychain" or the token file's path; empty when none
};

Token findToken();
// Saves `token`; returns where ("keychain" or the file's path).
Expected<QString> saveToken(const QString& token);
// Removes the token from the keychain and the token file.
void forgetToken();

// The token file: $HF_TOKEN_PATH, else $HF_HOME/token.
QString tokenFile();

} // namespace tandem::hub
