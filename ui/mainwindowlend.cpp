// The dashboard while this machine lends its device to another machine's run: whose run, this
// machine's share of it, its speed and its loss, and the way to stop lending.

#include "ui/chartpanel.h"
#include "ui/format.h"
#include "ui/historymodel.h"
#include "ui/mainwindow.h"
#include "ui/nodebridge.h"

#include <QLabel>
#include <QLocale>
#include <QPushButton>

namespace tandem::ui {

void MainWindow::onLendingChanged(bool running, const QString& coordinator) {
    m_chartsFolder.clear(); // the charts show the lent run, or will show History's again
    if (running) {
        m_lending = Lending{};
        m_lending.active = true;
        m_lending.coordinator = coordinator;
        m_charts->reset();
        m_charts->showLentView(true);
        log(tr("This machine is training for %1.").arg(coordinator));
    } else {
        m_lending.active = false;
        // The charts show this machine's part only where it trained a step.
        m_progressText->setText(
            m_lending.step > 0
                ? tr("This machine finished its work for %1. The charts show its part of that "
                     "run.")
                      .arg(coordinator)
                : tr("This machine finished its work for %1 before its first step.")
                      .arg(coordinator));
        log(tr("This machine finished its work for %1.").arg(coordinator));
    }
    // History lists the lent run, with this machine's part, from its start (the worker's
    // record in this machine's home).
    m_history->setLending(running);
    m_stopLending->setVisible(running);
    m_stopLending->setEnabled(running);
    if (running)
        showLending();
    updateControls();
    updateTray();
}

void MainWindow::onLendingEvent(const QJsonObject& e) {
    if (!m_lending.active)
        return;
    const QString kind = e.value(QStringLiteral("event")).toString();
    if (kind == QLatin1String("joined")) {
        m_lending.started = true;
        m_history->reload(); // the worker has recorded the run it joined
        if (const QString name = e.value(QStringLiteral("coordinator")).toString(); !name.isEmpty())
            m_lending.coordinator = name;
        m_lending.coordinatorId = e.value(QStringLiteral("coordinator_id")).toString();
        m_lending.device = e.value(QStringLiteral("device")).toString();
        m_lending.tokensPerSample = e.value(QStringLiteral("tokens_per_sample")).toInteger();
        if (m_lending.tokensPerSample > 0) { // the speed chart counts tokens
            m_charts->reset(Task::Sequence, 1, m_lending.tokensPerSample);
            m_charts->showLentView(true);
        }
    } else if (kind == QLatin1String("progress")) {
        m_lending.step = e.value(QStringLiteral("step")).toInteger();
        m_lending.samples = e.value(QStringLiteral("samples")).toInteger();
        m_lending.loss = e.value(QStringLiteral("loss")).toDouble();
        m_lending.samplesPerS = e.value(QStringLiteral("samples_per_s")).toDouble();
        m_lending.share = e.value(QStringLiteral("share")).toDouble();
        m_charts->addLentStep(m_lending.step, m_lending.loss, QStringLiteral("local"),
                              m_lending.samplesPerS);
    } else if (kind == QLatin1String("paused") || kind == QLatin1String("resumed")) {
        m_lending.paused = kind == QLatin1String("paused");
    } else {
        return;
    }
    showLending();
}

void MainWindow::showLending() {
    const Lending& l = m_lending;
    const QString whose = l.coordinatorId.isEmpty()
                              ? tr("Lending this machine to the run of %1").arg(l.coordinator)
                              : tr("Lending this machine to the run of %1 (device %2)")
                                    .arg(l.coordinator, shortDeviceId(l.coordinatorId));
    QString text;
    if (!l.started)
        text = tr("%1: receiving the model and the data…").arg(whose);
    else if (l.paused)
        text = tr("%1: %2 paused the run; this machine waits.").arg(whose, l.coordinator);
    else if (l.step == 0)
        text = tr("%1 on %2: waiting for the first step…").arg(whose, l.device);
    else {
        QStringList parts{tr("step %1").arg(QLocale().toString(l.step))};
        if (l.share > 0)
            parts << tr("this machine's share %1 %").arg(QLocale().toString(100 * l.share, 'f', 0));
        parts << speedText(l.samplesPerS, l.samplesPerS * double(l.tokensPerSample))
              << tr("loss %1").arg(QLocale().toString(l.loss, 'f', 3));
        text = tr("%1 on %2").arg(whose, l.device) + QStringLiteral(" · ") +
               parts.join(QStringLiteral(" · "));
    }
    m_progressText->setText(text);
}

} // namespace tandem::ui
