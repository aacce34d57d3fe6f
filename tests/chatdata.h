#pragma once

// Chat data the end-to-end tests fine-tune on, and how to tell a trained answer from noise.

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSet>
#include <QString>

namespace chatdata {

const char* const kFruits[][2] = {{"apple", "red"},   {"banana", "yellow"}, {"lime", "green"},
                                  {"plum", "purple"}, {"orange", "orange"}, {"grape", "green"},
                                  {"cherry", "red"},  {"lemon", "yellow"}};

// Conversations whose answers follow from the question: "What colour is a plum?" is answered
// "A plum is purple." A third have a system message first.
inline QByteArray chatLines(int count, quint32 seed) {
    QRandomGenerator rng(seed);
    QByteArray out;
    for (int i = 0; i < count; ++i) {
        const auto& f = kFruits[rng.bounded(8)];
        QJsonArray messages;
        if (i % 3 == 0)
            messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                        {QStringLiteral("content"), QStringLiteral("Be brief.")}});
        messages.append(
            QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                        {QStringLiteral("content"),
                         QStringLiteral("What colour is a %1?").arg(QLatin1String(f[0]))}});
        messages.append(QJsonObject{
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("content"),
             QStringLiteral("A %1 is %2.").arg(QLatin1String(f[0]), QLatin1String(f[1]))}});
        out += QJsonDocument(QJsonObject{{QStringLiteral("messages"), messages}})
                   .toJson(QJsonDocument::Compact) +
               '\n';
    }
    return out;
}

// How many of an answer's words are words of the trained answers: "A", "is", the fruits and
// their colours. A trained tiny model answers in them, whole or in part ("A plum is purple.",
// "is ple green.", "A lis is pe gree g"); an untrained one in any of its 704 tokens ("::� म म",
// "]]]]]]"), none of them.
inline int knownWords(const QString& answer) {
    QSet<QString> known{QStringLiteral("A"), QStringLiteral("is")};
    for (const auto& f : kFruits)
        known << QLatin1String(f[0]) << QLatin1String(f[1]);
    int hits = 0;
    for (const QString& w :
         answer.split(QRegularExpression(QStringLiteral("[\\s.,!?]+")), Qt::SkipEmptyParts))
        hits += known.contains(w) ? 1 : 0;
    return hits;
}

} // namespace chatdata
